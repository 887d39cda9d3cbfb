"""Generalized momentum, the external-torque observer and collision detection."""
