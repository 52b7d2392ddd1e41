package main

import (
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"

	cluster "github.com/reconcilekit/reconcilekit/adapters/clientgo/fakecluster"
	"github.com/reconcilekit/reconcilekit/examples/replicaset/controller"
	"github.com/reconcilekit/reconcilekit/expectations"
	"github.com/reconcilekit/reconcilekit/podrank"
)

// progress prints a line per sync that did something, a throttled line when
// only the counts moved, and the final summary. It is safe for concurrent use.
type progress struct {
	out   io.Writer
	start time.Time
	cfg   config

	mu        sync.Mutex
	lastPrint time.Time
	last      counts
	totals    totals
}

type counts struct{ desired, current, ready, available, terminating int32 }

type totals struct {
	syncs, written, skipped, failed, requeues, deferred            int
	created, batches, createFailed, notAttempted, retried, existed int
	deleted, deleteFailed, adopted, released                       int
	byEvidence, expired                                            int
}

func newProgress(out io.Writer, start time.Time, cfg config) *progress {
	return &progress{out: out, start: start, cfg: cfg}
}

// header explains the columns of the progress lines.
func (p *progress) header() {
	fmt.Fprintln(p.out, "   time  desired current ready avail  term expected | what the sync did")
	fmt.Fprintln(p.out, "  (status as written; expected = creations/deletions still awaited from the informer)")
}

func (p *progress) printf(format string, args ...any) {
	fmt.Fprintf(p.out, "%7.2fs  ", time.Since(p.start).Seconds())
	fmt.Fprintf(p.out, format, args...)
	fmt.Fprintln(p.out)
}

func (p *progress) phase(name string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.printf("── %s", name)
	p.lastPrint = time.Time{}
}

func (p *progress) note(format string, args ...any) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.printf("   "+format, args...)
}

func (p *progress) converged(rs *appsv1.ReplicaSet, took time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.printf("%s | ✓ converged in %.2fs", p.countsLine(countsOf(rs.Spec.Replicas, rs.Status), "-"), took.Seconds())
}

func countsOf(desired *int32, st appsv1.ReplicaSetStatus) counts {
	c := counts{current: st.Replicas, ready: st.ReadyReplicas, available: st.AvailableReplicas}
	if desired != nil {
		c.desired = *desired
	}
	if st.TerminatingReplicas != nil {
		c.terminating = *st.TerminatingReplicas
	}
	return c
}

func (p *progress) countsLine(c counts, pending string) string {
	return fmt.Sprintf("%7d %7d %5d %5d %5d %8s",
		c.desired, c.current, c.ready, c.available, c.terminating, pending)
}

// adoptions returns how many orphans the controller adopted so far.
func (p *progress) adoptions() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.totals.adopted
}

// onSync is the controller's OnSync hook.
func (p *progress) onSync(rep controller.Report) {
	p.mu.Lock()
	defer p.mu.Unlock()
	t := &p.totals
	t.syncs++
	if stale := (*expectations.StaleCacheError)(nil); errors.As(rep.Err, &stale) {
		t.deferred++ // the consistency gate: nothing was read
		return
	}
	if !rep.Found {
		return
	}
	res, o := rep.Sync, rep.Sync.Outcome
	switch {
	case rep.Err != nil:
		t.failed++
	case rep.Wrote:
		t.written++
	case !res.Now.IsZero():
		t.skipped++
	}
	if rep.Requeued {
		t.requeues++
	}
	switch res.Expectations.Resolution {
	case expectations.ResolvedByEvidence:
		t.byEvidence++
	case expectations.Expired:
		t.expired++
	}
	t.created += len(o.Created) + o.AlreadyExisted
	t.batches += len(o.Batches)
	t.createFailed += o.CreateFailed
	t.notAttempted += o.Skipped
	t.retried += o.Retried
	t.existed += o.AlreadyExisted
	t.deleted += len(o.Deleted)
	t.deleteFailed += len(o.DeleteFailed)
	t.adopted += rep.Adopted
	t.released += rep.Released

	c := countsOf(&rep.Desired, rep.Status)
	pending := "-"
	if s := rep.Pending; !s.Satisfied && (s.Adds > 0 || s.Dels > 0) {
		pending = fmt.Sprintf("+%d/-%d", max(s.Adds, 0), max(s.Dels, 0))
	}
	action := describe(rep) // "" when the sync only counted (or only its status write failed)
	now := time.Now()
	if action != "" || (c != p.last && now.Sub(p.lastPrint) >= 300*time.Millisecond) {
		line := p.countsLine(c, pending)
		if action != "" {
			line += " | " + action
		}
		p.printf("%s", line)
		p.lastPrint = now
	}
	p.last = c
}

// describe says in a few words what a sync did, or "" if it only counted.
func describe(rep controller.Report) string {
	res, o := rep.Sync, rep.Sync.Outcome
	var parts []string
	if res.Expectations.Resolution == expectations.ResolvedByEvidence {
		parts = append(parts, "resolved by evidence")
	}
	if rep.Adopted > 0 {
		parts = append(parts, fmt.Sprintf("adopted %d orphan(s)", rep.Adopted))
	}
	if rep.Released > 0 {
		parts = append(parts, fmt.Sprintf("released %d pod(s)", rep.Released))
	}
	if o.Diff < 0 && o.Expected > 0 {
		s := fmt.Sprintf("creating %d in batches %v", o.Expected, o.Batches)
		if o.CreateFailed > 0 {
			s += fmt.Sprintf(": %d failed, %d skipped", o.CreateFailed, o.Skipped)
		}
		if o.Retried > 0 {
			s += fmt.Sprintf(" (%d name(s) retried, %d existed)", o.Retried, o.AlreadyExisted)
		}
		parts = append(parts, s)
	}
	if len(o.Victims) > 0 {
		s := fmt.Sprintf("deleting %d of %d: %s", len(o.Victims), len(res.Active), explainVictims(o.Victims, res.Active, rep.Start))
		if n := len(o.DeleteFailed); n > 0 {
			s += fmt.Sprintf("; %d failed", n)
		}
		parts = append(parts, s)
	}
	if rep.Err != nil && len(parts) > 0 {
		if o.CreateFailed > 0 || len(o.DeleteFailed) > 0 {
			parts = append(parts, "requeued")
		} else {
			parts = append(parts, "requeued: "+shortError(rep.Err))
		}
	}
	return strings.Join(parts, "; ")
}

// shortError is the first line of err, without the API's boilerplate.
func shortError(err error) string {
	lines := strings.Split(err.Error(), "\n")
	s := strings.TrimPrefix(lines[0], "Internal error occurred: ")
	if strings.Contains(s, "could not be completed at this time") {
		s = "server timeout"
	}
	if len(s) > 50 {
		s = s[:47] + "..."
	}
	if len(lines) > 1 {
		s += fmt.Sprintf(" (+%d more)", len(lines)-1)
	}
	return s
}

// explainVictims says why the victims were chosen over the pods kept: for
// each victim, the first ranking rule (docs/rules.md §6) that puts it before the kept
// pod closest to deletion.
func explainVictims(victims, active []*corev1.Pod, now time.Time) string {
	chosen := map[*corev1.Pod]bool{}
	for _, v := range victims {
		chosen[v] = true
	}
	var next *corev1.Pod // the kept pod that would go next
	opts := podrank.Options{Now: now}
	for _, a := range active {
		if !chosen[a] && (next == nil || podrank.Compare(podrank.Ranked{Pod: a}, podrank.Ranked{Pod: next}, opts) < 0) {
			next = a
		}
	}
	if next == nil {
		return "every active pod goes"
	}
	why := map[string]int{}
	for _, v := range victims {
		why[reason(v, next, now)]++
	}
	keys := slices.SortedFunc(maps.Keys(why), func(a, b string) int { return why[b] - why[a] })
	var parts []string
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%d %s", why[k], k))
	}
	return strings.Join(parts, ", ")
}

// reason names the step of the deletion ranking that orders v before k
// (podrank.Explain; ranks are 0 for a bare ReplicaSet).
func reason(v, k *corev1.Pod, now time.Time) string {
	_, rule := podrank.Explain(podrank.Ranked{Pod: v}, podrank.Ranked{Pod: k}, podrank.Options{Now: now})
	return rule.String()
}

// summary prints the totals after the scenario.
func (p *progress) summary(phases []phaseResult, events map[string]int, cl *cluster.Cluster, satisfied bool, total time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	t := p.totals
	w := p.out
	fmt.Fprintln(w)
	fmt.Fprintln(w, "summary")
	for _, ph := range phases {
		fmt.Fprintf(w, "  %-52s %7.2fs\n", ph.name, ph.took.Seconds())
	}
	fmt.Fprintf(w, "  syncs %d: status written %d, write skipped (R-8.6) %d, failed and retried %d, availability requeues %d, deferred by the consistency gate %d\n",
		t.syncs, t.written, t.skipped, t.failed, t.requeues, t.deferred)
	fmt.Fprintf(w, "  pods created %d in %d slow-start batches (%d creates failed, %d not attempted, %d names retried, %d had existed)\n",
		t.created, t.batches, t.createFailed, t.notAttempted, t.retried, t.existed)
	fmt.Fprintf(w, "  pods deleted %d (%d deletes failed), adopted %d, released %d\n", t.deleted, t.deleteFailed, t.adopted, t.released)
	mode := "upstream counters, 5-minute timeout"
	if p.cfg.exact {
		mode = "exact: creations tracked by pod key, EvidenceFirst expiry"
	}
	fmt.Fprintf(w, "  expectations (%s): %d round(s) resolved by evidence, %d expired; satisfied at the end: %v\n",
		mode, t.byEvidence, t.expired, satisfied)
	var ev []string
	for _, k := range slices.Sorted(maps.Keys(events)) {
		ev = append(ev, fmt.Sprintf("%s %d", k, events[k]))
	}
	fmt.Fprintf(w, "  events: %s\n", strings.Join(ev, ", "))
	if cl != nil {
		s := cl.Stats()
		fmt.Fprintf(w, "  in-process API: %d pods stored, %d removed, %d status updates, %d faults injected, %d conflicts\n",
			s.PodsCreated, s.PodsDeleted, s.StatusUpdates, s.FaultsInjected, s.Conflicts)
	}
	fmt.Fprintf(w, "  total %.2fs\n", total.Seconds())
}
