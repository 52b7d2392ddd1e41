// Package podutil holds the pod predicates shared by podrank, status and
// reconcile: activity and termination, readiness and ready
// time, availability, restart counts and
// template-label matching.
//
// Every function accepts a nil pod and treats it as the zero pod would be
// treated by the rule it implements, except where documented; none allocates
// or modifies its argument.
package podutil
