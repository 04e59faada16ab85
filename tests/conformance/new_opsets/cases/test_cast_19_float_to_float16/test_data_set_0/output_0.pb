
ByJ‰WEÙ*ÍÀÉÄPLÛ