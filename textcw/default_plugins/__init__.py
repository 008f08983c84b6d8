"""The built-in catalogue, registered through the same hooks as any third-party plugin."""
