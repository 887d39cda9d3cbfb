"""Exceptions raised by rnea_ros. Every one is a ValueError, so `except ValueError` catches them all."""


class RneaError(ValueError):
    """Base of every error this package raises on bad input; the message names the culprit."""


class URDFError(RneaError):
    """A robot description that cannot become a dynamic model; the message names the link or joint."""


class ParameterError(RneaError):
    """An invalid parameter value; `name` is the parameter, the message says why."""

    def __init__(self, name: str, reason: str) -> None:
        super().__init__(f"{name}: {reason}")
        self.name = name
        self.reason = reason
