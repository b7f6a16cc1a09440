"""copal: evaluate whether organisational chatbots honour composed policies (the COPAL method)."""

__version__ = "0.1.0"
