package controlplane_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reconcilekit/reconcilekit/test/controlplane"
)

func TestParseRequestCounts(t *testing.T) {
	const text = `# HELP apiserver_request_total [STABLE] Counter of apiserver requests
# TYPE apiserver_request_total counter
apiserver_request_total{code="201",component="apiserver",dry_run="",group="",resource="pods",scope="resource",subresource="",verb="POST",version="v1"} 1005
apiserver_request_total{code="409",component="apiserver",dry_run="",group="",resource="pods",scope="resource",subresource="",verb="POST",version="v1"} 3
apiserver_request_total{code="200",component="apiserver",dry_run="",group="apps",resource="replicasets",scope="resource",subresource="status",verb="PUT",version="v1"} 42
apiserver_request_total{code="200",component="apiserver",dry_run="",group="",resource="pods",scope="resource",subresource="",verb="DELETE",version="v1"} 9.9e+02
apiserver_request_duration_seconds_bucket{le="0.1"} 7
apiserver_request_total{code="200",component="apiserver",dry_run="",group="",resource="odd\"name\\",scope="",subresource="",verb="GET",version="v1"} 1
`
	got, err := controlplane.ParseRequestCounts(strings.NewReader(text))
	require.NoError(t, err)
	assert.Len(t, got, 5)
	assert.Equal(t, 1008.0, got.Sum("POST", "pods", "", ""))
	assert.Equal(t, 3.0, got.Sum("POST", "pods", "", "409"))
	assert.Equal(t, 42.0, got.Sum("PUT", "replicasets", "status", ""))
	assert.Equal(t, 990.0, got.Sum("DELETE", "pods", "", "200"))
	assert.Equal(t, 1.0, got.Sum("GET", `odd"name\`, "", ""))

	earlier := controlplane.RequestCounts{{Verb: "POST", Resource: "pods", Code: "201"}: 5}
	assert.Equal(t, 1000.0, got.Since(earlier).Sum("POST", "pods", "", "201"))
}

func TestParseRequestCountsRejectsMalformedLines(t *testing.T) {
	for _, line := range []string{
		`apiserver_request_total{code="201"`,
		`apiserver_request_total{code=201} 1`,
		`apiserver_request_total{code="201"}`,
		`apiserver_request_total{code="201"} many`,
	} {
		_, err := controlplane.ParseRequestCounts(strings.NewReader(line + "\n"))
		assert.ErrorContains(t, err, "controlplane: metrics line", line)
	}
}
