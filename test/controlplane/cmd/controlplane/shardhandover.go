package main

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"
)

// shardHandOver is one graceful hand-over of a shard between two replica
// processes, from their log lines (rscontroller -quiet keeps these): the
// giver's "Giving a shard back" (it stops the shard's syncs, waits for its
// writes in flight, then writes the Lease released and logs "Gave a shard
// back"), the next holder's "Took a shard", its "Caches synced" (the
// shard's controller's informers) and its "First sync of the shard" (the
// first sync its caches let through), logged at the sync's end with how
// long it took: syncing is its start, synced its end. took, cached,
// syncing and synced are zero when the log has none.
type shardHandOver struct {
	shard, from, to                       string
	giving, took, cached, syncing, synced time.Time
}

// shardLogLine is one of those lines.
type shardLogLine struct {
	proc, msg, shard string
	prev             string        // "Took a shard": the Lease's previous holder
	took             time.Duration // "First sync of the shard": how long the sync took
	at               time.Time
}

// klogLine matches a klog text line's header, its message and the rest:
// `I1129 19:45:01.123456   123 tick.go:296] "Took a shard" shard="3/16" …`.
var (
	klogLine  = regexp.MustCompile(`^[IWE](\d{4} \d{2}:\d{2}:\d{2}\.\d{6})\s+\d+ [^\]]*\] "((?:[^"\\]|\\.)*)"(.*)$`)
	shardAttr = regexp.MustCompile(` shard="([^"]*)"`)
	prevAttr  = regexp.MustCompile(` previousHolder="([^"]*)"`)
	tookAttr  = regexp.MustCompile(` took="([^"]*)"`)
)

// parseShardLog returns the lines of output, proc's, that name a shard,
// timed in year (klog's header has none) and the local time zone.
func parseShardLog(proc, output string, year int) []shardLogLine {
	var out []shardLogLine
	for _, l := range strings.Split(output, "\n") {
		m := klogLine.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		s := shardAttr.FindStringSubmatch(m[3])
		if s == nil {
			continue
		}
		at, err := time.ParseInLocation("0102 15:04:05.000000", m[1], time.Local)
		if err != nil {
			continue
		}
		l := shardLogLine{proc: proc, msg: m[2], shard: s[1], at: at.AddDate(year, 0, 0)}
		if p := prevAttr.FindStringSubmatch(m[3]); p != nil {
			l.prev = p[1]
		}
		if d := tookAttr.FindStringSubmatch(m[3]); d != nil {
			l.took, _ = time.ParseDuration(d[1])
		}
		out = append(out, l)
	}
	return out
}

// pairHandOvers pairs every "Gave a shard back" at or after since, from
// its giver's "Giving a shard back" of the shard just before it (or from
// itself when there is none), with the first "Took a shard" of that shard
// by another process from then on (a take may be logged a moment before
// the give-back's own line), and that taker's first "First sync of the
// shard" of it from the take on. In the order of the give-backs.
func pairHandOvers(lines []shardLogLine, since time.Time) []shardHandOver {
	lines = slices.Clone(lines)
	slices.SortStableFunc(lines, func(a, b shardLogLine) int { return a.at.Compare(b.at) })
	var out []shardHandOver
	for i, l := range lines {
		if l.msg != "Gave a shard back" || l.at.Before(since) {
			continue
		}
		from := l.at
		for j := i - 1; j >= 0; j-- {
			p := lines[j]
			if p.proc != l.proc || p.shard != l.shard {
				continue
			}
			if p.msg == "Giving a shard back" {
				from = p.at
			}
			if p.msg == "Giving a shard back" || p.msg == "Took a shard" || p.msg == "Gave a shard back" {
				break // this give-back's start, or the hold before it
			}
		}
		h := shardHandOver{shard: l.shard, from: l.proc, giving: from}
		for _, t := range lines {
			if t.msg == "Took a shard" && t.shard == l.shard && t.proc != l.proc && !t.at.Before(from) {
				h.to, h.took = t.proc, t.at
				break
			}
		}
		if h.to != "" {
			for _, s := range lines {
				if s.msg == "Caches synced" && s.shard == l.shard && s.proc == h.to && !s.at.Before(h.took) {
					h.cached = s.at
					break
				}
			}
			for _, s := range lines {
				if s.msg == "First sync of the shard" && s.shard == l.shard && s.proc == h.to && !s.at.Before(h.took) {
					h.syncing, h.synced = s.at.Add(-s.took), s.at
					break
				}
			}
		}
		out = append(out, h)
	}
	return out
}

// resyncs is how the shards of a replica stopped at one moment were
// synced again by the others: shards is how many they took from it
// (their Lease's previous holder) from then on, synced how many of those
// the taker synced, and longest and longestStart the longest from the
// moment to the end and to the start of a taker's first sync of one (0
// when none).
type resyncs struct {
	shards, synced        int
	longest, longestStart time.Duration
}

// resyncsOf finds, in lines, the takes of victim's shards by another
// process at or after at, and each taker's first "First sync of the shard"
// after its take.
func resyncsOf(lines []shardLogLine, victim string, at time.Time) resyncs {
	lines = slices.Clone(lines)
	slices.SortStableFunc(lines, func(a, b shardLogLine) int { return a.at.Compare(b.at) })
	var r resyncs
	for i, t := range lines {
		if t.msg != "Took a shard" || t.prev != victim || t.proc == victim || t.at.Before(at) {
			continue
		}
		r.shards++
		for _, s := range lines[i+1:] {
			if s.msg == "First sync of the shard" && s.shard == t.shard && s.proc == t.proc {
				r.synced++
				r.longest = max(r.longest, s.at.Sub(at))
				r.longestStart = max(r.longestStart, s.at.Add(-s.took).Sub(at))
				break
			}
		}
	}
	return r
}

// logLines reads every process's output, the lines that name a shard, in
// the year of at (read once for pairHandOvers and resyncsOf). Call it
// before the control plane stops.
func (g *shardGroup) logLines(at time.Time) []shardLogLine {
	var lines []shardLogLine
	for _, o := range g.outputs() {
		lines = append(lines, parseShardLog(o.proc, o.output, at.Year())...)
	}
	return lines
}

// formatHandOvers is the hand-overs of every run together: how many, how
// many were taken and reached a first sync, and from the giver's "Giving a
// shard back" to the take, to the taker's caches synced and to the first
// sync's start and end, the median and the longest; "—" for none.
func formatHandOvers(hs []shardHandOver) string {
	var took, cached, syncing, synced []float64
	for _, h := range hs {
		if !h.took.IsZero() {
			took = append(took, h.took.Sub(h.giving).Seconds())
		}
		if !h.cached.IsZero() {
			cached = append(cached, h.cached.Sub(h.giving).Seconds())
		}
		if !h.synced.IsZero() {
			syncing = append(syncing, h.syncing.Sub(h.giving).Seconds())
			synced = append(synced, h.synced.Sub(h.giving).Seconds())
		}
	}
	if len(hs) == 0 {
		return "—"
	}
	stat := func(v []float64) string {
		if len(v) == 0 {
			return "—"
		}
		slices.Sort(v)
		return fmt.Sprintf("%.2f s, most %.2f s", median(v), v[len(v)-1])
	}
	return fmt.Sprintf("%d (%d taken, %d synced); taken %s; caches synced %s; first sync started %s, ended %s", len(hs), len(took), len(synced), stat(took), stat(cached), stat(syncing), stat(synced))
}
