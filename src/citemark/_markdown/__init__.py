"""Where Markdown holds code, paragraphs, emphasis and blocks."""
