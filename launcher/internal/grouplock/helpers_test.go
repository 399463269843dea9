package grouplock

import (
	"time"
)

var t0 = time.Date(2026, 3, 1, 9, 30, 0, 0, time.UTC)
