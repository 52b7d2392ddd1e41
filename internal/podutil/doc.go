// Package podutil holds the pod predicates that status, podrank and
// reconcile share but do not export: readiness and ready time (R-5.4,
// ), availability, restart counts and template-label
// matching.
//
// They stay internal by decision (issue 26): the one public place for pod
// predicates is package podrank, which implements activity and termination
// itself (IsActive, IsTerminating and their filters, R-5.1 to ), the
// predicates every controller filters its pods with. Readiness and
// availability are what status counts (status.Count, status.Calculate);
// no caller in the repository — adapters, examples, test modules — needs
// one pod's answer, and exporting them from status or podrank would add a
// second public home or make one primitive package reach into another.
//
// Every function accepts a nil pod and treats it as the zero pod would be
// treated by the rule it implements, except where documented; none allocates
// or modifies its argument.
package podutil
