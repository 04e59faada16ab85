
BbiasJr5NµÂ´û²