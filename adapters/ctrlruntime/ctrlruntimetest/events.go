package ctrlruntimetest

import (
	"fmt"
	"sync"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/record"
)

// eventLog is a record.EventRecorder that keeps every event, unbounded
// (client-go's FakeRecorder blocks once its channel is full).
type eventLog struct {
	mu     sync.Mutex
	events []string
}

var _ record.EventRecorder = (*eventLog)(nil)

func (l *eventLog) Event(_ runtime.Object, eventtype, reason, message string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.events = append(l.events, eventtype+" "+reason+" "+message)
}

func (l *eventLog) Eventf(obj runtime.Object, eventtype, reason, messageFmt string, args ...any) {
	l.Event(obj, eventtype, reason, fmt.Sprintf(messageFmt, args...))
}

func (l *eventLog) AnnotatedEventf(obj runtime.Object, _ map[string]string, eventtype, reason, messageFmt string, args ...any) {
	l.Eventf(obj, eventtype, reason, messageFmt, args...)
}

func (l *eventLog) all() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.events...)
}
