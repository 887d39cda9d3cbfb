"""Joint friction: the model, the compensation bound and the runaway guard."""
