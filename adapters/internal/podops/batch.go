package podops

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// maxBatchNames bounds how many pod names one batch event lists, so that a
// batch of 500 creates still makes a short message.
const maxBatchNames = 10

// BatchMessage is the message of the one SuccessfulCreate event recorded
// for a slow-start batch: "Created pod: a" for one pod (upstream's
// message), "Created 3 pods: a, b, c" for more, the names cut after
// maxBatchNames with the number left out.
func BatchMessage(created []*corev1.Pod) string {
	if len(created) == 1 {
		return "Created pod: " + created[0].Name
	}
	names := make([]string, 0, min(len(created), maxBatchNames))
	for _, p := range created[:min(len(created), maxBatchNames)] {
		names = append(names, p.Name)
	}
	msg := fmt.Sprintf("Created %d pods: %s", len(created), strings.Join(names, ", "))
	if more := len(created) - len(names); more > 0 {
		msg += fmt.Sprintf(" and %d more", more)
	}
	return msg
}
