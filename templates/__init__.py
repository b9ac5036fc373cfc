"""rulegen's Jinja2 templates (installed as the package ``rulegen.templates``)."""
