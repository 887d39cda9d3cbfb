"""Identification of inertial, friction and payload parameters from recorded data, one module per
step: reading a bag (`bag`, `recording`), the samples (`signals`), the regressor (`regressor`),
what the data can identify (`identifiability`), the least squares (`least_squares`), physical
consistency and its refit (`consistency`, `physical_fit`), the payload (`payload`), the efforts
as modelled (`prediction`), `identify` itself (`fit`), its warnings (`checks`), the files written
(`written`), the table and plot (`report`), excitation trajectories (`excitation`) and the
rnea_ros_identify command (`cli`).
"""
