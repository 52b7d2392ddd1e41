// Package podtest builds pods for tests: a name plus options, so a table case
// reads like the rule it pins. It is test support and is not used by the
// library's own logic.
package podtest
