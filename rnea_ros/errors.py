"""Exceptions raised by the rnea_ros core."""


class URDFError(ValueError):
    """A robot description that cannot become a dynamic model; the message names the link or joint."""
