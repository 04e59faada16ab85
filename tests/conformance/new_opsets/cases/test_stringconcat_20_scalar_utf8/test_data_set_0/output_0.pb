2
héllo ✓2
wörld ✓By