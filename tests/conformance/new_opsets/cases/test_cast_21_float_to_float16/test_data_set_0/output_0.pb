
ByJ{VXXÙ„TCSÝV