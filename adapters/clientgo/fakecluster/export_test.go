package fakecluster

// SetHistorySize sets how many writes per resource a watch can be replayed
// from and returns a function that restores the previous size.
func SetHistorySize(n int) (restore func()) {
	old := historySize
	historySize = n
	return func() { historySize = old }
}
