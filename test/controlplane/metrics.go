package controlplane

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"

	"k8s.io/client-go/kubernetes"
)

// Request identifies one series of kube-apiserver's apiserver_request_total
// counter (the labels that matter for counting a controller's writes).
type Request struct {
	Verb        string // CREATE, DELETE, UPDATE, PATCH, GET, LIST, WATCH, …
	Group       string // "" for the core group
	Resource    string // pods, replicasets, …
	Subresource string // status, …
	Code        string // HTTP status code, "201", "409", …
}

// RequestCounts maps each series of apiserver_request_total to its value.
type RequestCounts map[Request]float64

// Sum adds the series with this verb, resource and subresource, over every
// group and code; code, when non-empty, restricts the sum to that code.
func (c RequestCounts) Sum(verb, resource, subresource, code string) float64 {
	var n float64
	for r, v := range c {
		if r.Verb == verb && r.Resource == resource && r.Subresource == subresource && (code == "" || r.Code == code) {
			n += v
		}
	}
	return n
}

// Since returns c minus earlier, series by series (counters only grow while
// kube-apiserver runs; a series missing from earlier counts from zero).
func (c RequestCounts) Since(earlier RequestCounts) RequestCounts {
	out := make(RequestCounts, len(c))
	for r, v := range c {
		if d := v - earlier[r]; d != 0 {
			out[r] = d
		}
	}
	return out
}

// RequestCounts scrapes kube-apiserver's /metrics and returns its
// apiserver_request_total series.
func (cp *ControlPlane) RequestCounts(ctx context.Context) (RequestCounts, error) {
	client, err := kubernetes.NewForConfig(cp.RESTConfig())
	if err != nil {
		return nil, fmt.Errorf("controlplane: %w", err)
	}
	body, err := client.CoreV1().RESTClient().Get().AbsPath("/metrics").Stream(ctx)
	if err != nil {
		return nil, fmt.Errorf("controlplane: GET /metrics: %w", err)
	}
	defer body.Close()
	return ParseRequestCounts(body)
}

// ParseRequestCounts reads the Prometheus text exposition format and returns
// the apiserver_request_total series; other metrics are skipped.
func ParseRequestCounts(r io.Reader) (RequestCounts, error) {
	const name = "apiserver_request_total{"
	out := RequestCounts{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, name) {
			continue
		}
		labels, rest, err := parseLabels(line[len(name):])
		if err != nil {
			return nil, fmt.Errorf("controlplane: metrics line %q: %w", line, err)
		}
		fields := strings.Fields(rest)
		if len(fields) == 0 {
			return nil, fmt.Errorf("controlplane: metrics line %q: no value", line)
		}
		v, err := strconv.ParseFloat(fields[0], 64)
		if err != nil {
			return nil, fmt.Errorf("controlplane: metrics line %q: %w", line, err)
		}
		out[Request{
			Verb: labels["verb"], Group: labels["group"], Resource: labels["resource"],
			Subresource: labels["subresource"], Code: labels["code"],
		}] += v
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("controlplane: reading metrics: %w", err)
	}
	return out, nil
}

// parseLabels parses `k="v",k2="v2"} rest` and returns the labels and rest.
func parseLabels(s string) (map[string]string, string, error) {
	labels := map[string]string{}
	for {
		s = strings.TrimLeft(s, " ,")
		if strings.HasPrefix(s, "}") {
			return labels, s[1:], nil
		}
		eq := strings.IndexByte(s, '=')
		if eq <= 0 || len(s) < eq+2 || s[eq+1] != '"' {
			return nil, "", fmt.Errorf("malformed label at %q", s)
		}
		key := strings.TrimSpace(s[:eq])
		s = s[eq+2:]
		var val strings.Builder
		closed := false
		for i := 0; i < len(s); i++ {
			switch c := s[i]; {
			case c == '\\' && i+1 < len(s):
				i++
				if s[i] == 'n' {
					val.WriteByte('\n')
				} else {
					val.WriteByte(s[i])
				}
			case c == '"':
				s, closed = s[i+1:], true
			default:
				val.WriteByte(c)
			}
			if closed {
				break
			}
		}
		if !closed {
			return nil, "", fmt.Errorf("unterminated value of label %q", key)
		}
		labels[key] = val.String()
	}
}
