"""Facts about one file, shared by the rules (see ``facts.py``)."""
