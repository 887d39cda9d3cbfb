"""The inverse_dynamics node (and its lifecycle variant): parameters in, efforts out every cycle."""
