"""Tools that look at a whole arm: the starting configuration ``arm_config`` writes
(``config_writer``), the reachability map (``reachability``) and the numeric experiments
(``experiments``). They sit on top: they use every layer below and nothing uses them."""
