"""Exceptions raised by rnea_ros. Every one is an RneaError and so a ValueError: `except RneaError`
(or `except ValueError`) catches them all."""

from __future__ import annotations


class RneaError(ValueError):
    """Base of every error this package raises on bad input; the message names the culprit."""


class URDFError(RneaError):
    """A robot description that cannot become a dynamic model; the message names the link or joint."""


class UnknownLinkError(RneaError, KeyError):
    """A link name that is not part of the model (a KeyError too, as a failed lookup by name)."""

    __str__ = BaseException.__str__  # the message as given, not quoted like KeyError's


class UnknownJointError(RneaError, KeyError):
    """A joint name that is not a movable joint of the model (a KeyError too)."""

    __str__ = BaseException.__str__


class ParameterError(RneaError):
    """An invalid parameter value; `name` is the parameter, the message says why."""

    def __init__(self, name: str, reason: str) -> None:
        super().__init__(f"{name}: {reason}")
        self.name = name
        self.reason = reason


class TrajectoryInPastError(RneaError):
    """A trajectory that ends before it is received (joint_trajectory_controller rejects it too)."""


class ContactError(RneaError):
    """A contact that cannot enter the contact-force problem (`rnea_ros.algorithms.contacts`);
    `link` names it, the message says why."""

    def __init__(self, link: str, reason: str) -> None:
        super().__init__(f"contact '{link}': {reason}")
        self.link = link
        self.reason = reason


class ImuLinkError(RneaError):
    """An IMU frame that is not a link fixed to the root; the message names the link."""


class BadInputError(RneaError):
    """Input a command-line tool cannot use (`rnea_ros_identify`: an unreadable bag or URDF, a
    missing topic or joint, too few samples); the tool prints the message as one line and exits 2."""


class IllConditionedError(RneaError):
    """Λ = (S J M⁻¹ Jᵀ Sᵀ)⁻¹ asked for where Λ⁻¹ is (nearly) singular: a singular configuration,
    or task coordinates the joints cannot move. `condition` is μ_max / μ_min of Λ⁻¹ (inf when
    exactly singular)."""

    def __init__(self, message: str, condition: float) -> None:
        super().__init__(message)
        self.condition = condition


class PayloadRefused(RneaError):
    """A window of data from which no payload estimate follows; `reason` names the rule
    (rnea_ros.estimation.payload.REASONS), the message says why, `estimate` is the unchecked fit
    (None when there was none)."""

    def __init__(self, reason: str, message: str, estimate: object) -> None:
        super().__init__(message)
        self.reason = reason
        self.estimate = estimate
