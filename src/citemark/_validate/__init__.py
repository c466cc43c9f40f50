"""validate's rules: the checks of an answer against its sources, and the `Diagnostic` rows
they give, in plain Python over the compiled code scan."""
