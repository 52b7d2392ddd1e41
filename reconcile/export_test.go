package reconcile

// SetTrackCreations turns tracked creations on or off in the Controllers
// built from c without the rest of Expectations.Exact: for tests whose fake
// API ignores GenerateName, or that compare the two ways of counting.
func (c *Config[T]) SetTrackCreations(on bool) { c.trackCreations = on }

// SetNameGenerator makes the Controllers built from c name tracked
// creations with gen: deterministic names for tests.
func (c *Config[T]) SetNameGenerator(gen func(prefix string) string) { c.nameGenerator = gen }
