"""The HTTP service: the Starlette app and the webhook intake."""
