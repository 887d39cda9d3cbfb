"""Node plumbing shared by every executable: QoS, stamps, the wait-set loop, parameter schemas and
their declaration, joint_states merging.
"""
