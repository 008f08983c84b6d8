"""The page served at ``/`` (plain HTML, CSS and a little JavaScript)."""
