package groupkind

import (
	"reflect"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func shareAnswer(code int16, state string, clients ...string) *kmsg.ShareGroupDescribeResponse {
	g := kmsg.NewShareGroupDescribeResponseGroup()
	g.GroupID, g.ErrorCode, g.GroupState = "g", code, state
	for _, c := range clients {
		m := kmsg.NewShareGroupDescribeResponseGroupMember()
		m.ClientID, m.ClientHost = c, "/10.0.0.1"
		g.Members = append(g.Members, m)
	}
	return &kmsg.ShareGroupDescribeResponse{Groups: []kmsg.ShareGroupDescribeResponseGroup{g}}
}

func streamsAnswer(code int16, state string, subs ...kmsg.StreamsGroupDescribeResponseGroupTopologySubtopology) *kmsg.StreamsGroupDescribeResponse {
	g := kmsg.NewStreamsGroupDescribeResponseGroup()
	g.Group, g.ErrorCode, g.State = "g", code, state
	if subs != nil {
		g.Topology = &kmsg.StreamsGroupDescribeResponseGroupTopology{Subtopologies: subs}
	}
	return &kmsg.StreamsGroupDescribeResponse{Groups: []kmsg.StreamsGroupDescribeResponseGroup{g}}
}

func TestDecide(t *testing.T) {
	notFound := kerr.GroupIDNotFound.Code
	sub := func(src []string, repSink []string, repSrc ...string) kmsg.StreamsGroupDescribeResponseGroupTopologySubtopology {
		s := kmsg.NewStreamsGroupDescribeResponseGroupTopologySubtopology()
		s.SourceTopics, s.RepartitionSinkTopics = src, repSink
		for _, r := range repSrc {
			s.RepartitionSourceTopics = append(s.RepartitionSourceTopics, kmsg.TopicInfo{Topic: r})
		}
		return s
	}
	for _, tc := range []struct {
		name    string
		share   *kmsg.ShareGroupDescribeResponse
		streams *kmsg.StreamsGroupDescribeResponse
		want    Info
		wantErr string
	}{
		{name: "neither kind, or no group", share: shareAnswer(notFound, ""), streams: streamsAnswer(notFound, ""), want: Info{Kind: Consumer}},
		{name: "a broker that knows neither request", want: Info{Kind: Consumer}},
		{name: "share groups turned off", share: shareAnswer(kerr.UnsupportedVersion.Code, ""), want: Info{Kind: Consumer}},
		{name: "a live share group", share: shareAnswer(0, "Stable", "a", "b"), streams: streamsAnswer(notFound, ""),
			want: Info{Kind: Share, State: "Stable", Members: []string{"a@10.0.0.1", "b@10.0.0.1"}}},
		{name: "an empty share group on a broker without streams groups", share: shareAnswer(0, "Empty"), want: Info{Kind: Share, State: "Empty"}},
		{name: "a streams group's input and repartition topics", share: shareAnswer(notFound, ""),
			streams: streamsAnswer(0, "Empty",
				sub([]string{"orders", "clicks"}, []string{"app-rekey-repartition"}),
				sub([]string{"app-rekey-repartition"}, nil, "app-rekey-repartition")),
			want: Info{Kind: Streams, State: "Empty", SourceTopics: []string{"clicks", "orders"}, RepartitionTopics: []string{"app-rekey-repartition"}}},
		{name: "both kinds", share: shareAnswer(0, "Empty"), streams: streamsAnswer(0, "Empty"), wantErr: "both as a share group and as a streams group"},
		{name: "not the coordinator is passed on", share: shareAnswer(kerr.NotCoordinator.Code, ""), wantErr: "NOT_COORDINATOR"},
		{name: "refused authorization is passed on", streams: streamsAnswer(kerr.GroupAuthorizationFailed.Code, ""), wantErr: "GROUP_AUTHORIZATION_FAILED"},
		{name: "a share answer for no group", share: &kmsg.ShareGroupDescribeResponse{}, wantErr: "0 answers"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := decide("g", tc.share, tc.streams)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}

// TestDecideRetriable: a coordinator moving or loading is retried by
// Describe; the error decide returns keeps Kafka's code for that.
func TestDecideRetriable(t *testing.T) {
	_, err := decide("g", shareAnswer(kerr.CoordinatorLoadInProgress.Code, ""), nil)
	if !retriable(err) {
		t.Errorf("%v is not retried", err)
	}
	_, err = decide("g", nil, streamsAnswer(kerr.GroupAuthorizationFailed.Code, ""))
	if retriable(err) {
		t.Errorf("%v is retried", err)
	}
}

// TestInternalTopics: the topics --delete-all-internal-topics deletes, as
// Kafka 4.4's StreamsGroupCommand picks them: repartition source and
// changelog topics that are no subtopology's source topic and are named
// as the application's own.
func TestInternalTopics(t *testing.T) {
	sub := func(src []string, repSrc []string, changelogs ...string) kmsg.StreamsGroupDescribeResponseGroupTopologySubtopology {
		s := kmsg.NewStreamsGroupDescribeResponseGroupTopologySubtopology()
		s.SourceTopics = src
		for _, r := range repSrc {
			s.RepartitionSourceTopics = append(s.RepartitionSourceTopics, kmsg.TopicInfo{Topic: r})
		}
		for _, c := range changelogs {
			s.StateChangelogTopics = append(s.StateChangelogTopics, kmsg.TopicInfo{Topic: c})
		}
		return s
	}
	for _, tc := range []struct {
		name string
		subs []kmsg.StreamsGroupDescribeResponseGroupTopologySubtopology
		want []string
	}{
		{"none", []kmsg.StreamsGroupDescribeResponseGroupTopologySubtopology{sub([]string{"orders"}, nil)}, nil},
		{"changelogs and repartition topics, sorted",
			[]kmsg.StreamsGroupDescribeResponseGroupTopologySubtopology{
				sub([]string{"orders"}, nil, "app-store-changelog"),
				sub(nil, []string{"app-rekey-repartition"}, "app-agg-changelog"),
			}, []string{"app-agg-changelog", "app-rekey-repartition", "app-store-changelog"}},
		{"a source topic is never deleted, even named as internal",
			[]kmsg.StreamsGroupDescribeResponseGroupTopologySubtopology{
				sub([]string{"app-rekey-repartition"}, []string{"app-rekey-repartition"}, "app-store-changelog"),
			}, []string{"app-store-changelog"}},
		{"another application's, or a user's topic, is never deleted",
			[]kmsg.StreamsGroupDescribeResponseGroupTopologySubtopology{
				sub([]string{"orders"}, []string{"other-rekey-repartition"}, "app-store", "apps-store-changelog", "shared-changelog"),
			}, nil},
		{"foreign-key join topics",
			[]kmsg.StreamsGroupDescribeResponseGroupTopologySubtopology{
				sub(nil, []string{"app-KTABLE-FK-JOIN-SUBSCRIPTION-REGISTRATION-0000000006-topic", "app-KTABLE-FK-JOIN-SUBSCRIPTION-RESPONSE-0000000012-topic", "app-x-subscription-registration-topic", "app-KTABLE-FK-JOIN-SUBSCRIPTION-REGISTRATION-x-topic"}),
			}, []string{"app-KTABLE-FK-JOIN-SUBSCRIPTION-REGISTRATION-0000000006-topic", "app-KTABLE-FK-JOIN-SUBSCRIPTION-RESPONSE-0000000012-topic", "app-x-subscription-registration-topic"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := internalTopics("app", tc.subs); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}
