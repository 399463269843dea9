# The shape of the bug of issue 23, reduced: test-plugin names $(HELM)
# before HELM is defined, so the prerequisite is empty and helm is built
# only later, by test-chart. `make -n` prints and runs nothing else.
CACHE_DIR ?= /nonexistent
TOOLS := $(CACHE_DIR)/tools

test: test-plugin test-chart

test-plugin: $(HELM)
	HELM=$(HELM) go test ./plugin/...

HELM := $(TOOLS)/helm-v3.22.0

test-chart: $(HELM)
	HELM=$(HELM) go test ./chart/...

unknown-tool:
	$(CACHE_DIR)/something-new/bin/run

$(HELM):
	TOOLS=$(TOOLS) test/tools/helm/build.sh >/dev/null
