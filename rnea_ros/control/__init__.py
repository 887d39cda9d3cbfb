"""The effort law (the terms the nodes compensate, with gravity, friction, wrenches and limits) and the
feedback bound.
"""
