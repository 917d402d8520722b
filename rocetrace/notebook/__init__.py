"""What an Analysis offers in a notebook: selection (`.flow`, `.select`), plots on demand
(`.plot`), and how it shows itself (`_repr_html_`). docs/notebook.md walks through it."""
