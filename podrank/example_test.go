package podrank_test

import (
	"fmt"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"

	pt "github.com/reconcilekit/reconcilekit/internal/podtest"
	"github.com/reconcilekit/reconcilekit/podrank"
)

func ExampleForDeletion() {
	now := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	pods := []*corev1.Pod{
		pt.New("old", pt.Node("a"), pt.Ready(now.Add(-72*time.Hour))),
		pt.New("fresh", pt.Node("b"), pt.Ready(now.Add(-time.Minute))),
		pt.New("starting", pt.Node("b"), pt.NotReady()),
		pt.New("cheap", pt.Node("a"), pt.Ready(now.Add(-72*time.Hour)), pt.DeletionCost("-10")),
	}
	for _, p := range podrank.ForDeletion(pods, pods, 3, podrank.Options{Now: now}) {
		fmt.Println(p.Name)
	}
	fmt.Println("input untouched:", pods[0].Name, pods[1].Name, pods[2].Name, pods[3].Name)
	// Output:
	// starting
	// cheap
	// fresh
	// input untouched: old fresh starting cheap
}

func ExampleCompare() {
	now := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	// Ready 40 and 50 minutes ago: the same log2 bucket (2^41 ns ≈ 36m39s
	// to 73m18s), so the UIDs decide, not the exact times.
	a := podrank.Ranked{Pod: pt.New("a", pt.UID("b-uid"), pt.Ready(now.Add(-40*time.Minute)))}
	b := podrank.Ranked{Pod: pt.New("b", pt.UID("a-uid"), pt.Ready(now.Add(-50*time.Minute)))}
	fmt.Println(podrank.Compare(a, b, podrank.Options{Now: now}) > 0)
	// Without a Now the exact times decide: the more recent goes first.
	fmt.Println(podrank.Compare(a, b, podrank.Options{}) < 0)
	// Output:
	// true
	// true
}

func ExampleParseDeletionCost() {
	for _, v := range []string{"-007", "007", "+10", "2147483648"} {
		cost, err := podrank.ParseDeletionCost(v)
		fmt.Println(cost, err)
	}
	// Output:
	// -7 <nil>
	// 0 podrank: invalid deletion cost "007": must be "0" or start with '-' or a digit 1-9
	// 0 podrank: invalid deletion cost "+10": must be "0" or start with '-' or a digit 1-9
	// 0 podrank: invalid deletion cost: strconv.ParseInt: parsing "2147483648": value out of range
}

func ExampleRanksByNode() {
	pods := []*corev1.Pod{pt.New("x", pt.Node("a")), pt.New("y", pt.Node("b"))}
	related := slices.Concat(pods, []*corev1.Pod{
		pt.New("sibling", pt.Node("a")),
		pt.New("leaving", pt.Node("b"), pt.Deleting(pt.Epoch)), // not active: not counted
	})
	fmt.Println(podrank.RanksByNode(pods, related))
	// Output:
	// [2 1]
}

func ExampleFilterActive() {
	pods := []*corev1.Pod{
		pt.New("running"),
		pt.New("done", pt.Phase(corev1.PodSucceeded)),
		pt.New("leaving", pt.Deleting(pt.Epoch)),
	}
	for _, p := range podrank.FilterActive(pods) {
		fmt.Println("active:", p.Name)
	}
	for _, p := range podrank.FilterTerminating(pods) {
		fmt.Println("terminating:", p.Name)
	}
	fmt.Println(podrank.FilterActive(pods[1:2]) == nil)
	// Output:
	// active: running
	// terminating: leaving
	// true
}

func ExamplePointers() {
	now := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	// What a list returns: PodList.Items, or a controller-runtime List.
	list := corev1.PodList{Items: []corev1.Pod{
		*pt.New("old", pt.Node("a"), pt.Ready(now.Add(-72*time.Hour))),
		*pt.New("starting", pt.Node("b"), pt.NotReady()),
		*pt.New("fresh", pt.Node("b"), pt.Ready(now.Add(-time.Minute))),
	}}
	pods := podrank.Pointers(list.Items) // pointers into list.Items, no pod copied
	for _, p := range podrank.ForDeletion(pods, pods, 2, podrank.Options{Now: now}) {
		fmt.Println(p.Name)
	}
	fmt.Println(pods[0] == &list.Items[0])
	// Output:
	// starting
	// fresh
	// true
}
