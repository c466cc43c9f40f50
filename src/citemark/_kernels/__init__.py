"""Every compiled/pure kernel pair, the C headers they share, and the one loader."""
