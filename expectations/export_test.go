package expectations

// Attached returns how many Trackers g holds, collected or not: for the
// test that a Gate does not keep the Trackers built per call.
func Attached(g *Gate) int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return len(g.trackers)
}
