BxJ˜UÏBWC©í/Ã
pB4YhB€•ÛB