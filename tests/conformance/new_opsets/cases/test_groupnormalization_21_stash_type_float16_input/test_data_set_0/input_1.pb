
BscaleJ𵏸@.5