/**
 * Issue 42 class 5: the node's disk. Reservations and the eviction threshold larger than the node's
 * disk, a log allowance below what the node agent keeps or above what a node has, a backup job's
 * /tmp that fits on no node: refused, naming the key; npm run explain never shows negative room.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { allocatable } from "../cli/explain/capacity";
import { kubeletConfiguration } from "../components/platform/nodeSettings";
import { loadConfig, mapSource } from "../config";
import { configProblems as problems, VALID } from "./configProblems";

describe("issue 42 class 5: the node's disk", () => {
    it("reservations and evictionHard nodefs.available that leave nothing of the node's disk are refused", () => {
        assert.match(problems({ nodePoolEphemeralStorage: "10Gi", nodeAgentSystemReservedEphemeralStorage: "8Gi", nodeAgentKubeReservedEphemeralStorage: "2Gi" }), /ops:nodePoolEphemeralStorage: 10Gi leaves nothing for pods after nodeAgentSystemReservedEphemeralStorage 8Gi \+ nodeAgentKubeReservedEphemeralStorage 2Gi \+ nodeAgentEvictionHardNodefsAvailable 10%; expected a node disk above 11264Mi/);
        assert.match(problems({ nodePoolEphemeralStorage: "20Gi", nodeAgentKubeReservedEphemeralStorage: "64Ti" }), /ops:nodePoolEphemeralStorage: 20Gi leaves nothing for pods/);
        assert.match(problems({ nodeAgentEvictionHardNodefsAvailable: "100%" }), /ops:nodePoolEphemeralStorage: .* leaves nothing for pods/);
        assert.equal(problems({ nodePoolEphemeralStorage: "20Gi" }), "");
    });

    it("a log allowance below what the node agent keeps (its files of its rotation size), or above a node's room, is refused", () => {
        assert.match(problems({ guardrailsContainerLogStorage: "32Mi" }), /ops:guardrailsContainerLogStorage: 32Mi is less than the node agent keeps of a container's logs \(nodeAgentContainerLogMaxFiles 5 x nodeAgentContainerLogMaxSize 10Mi = 50Mi\)/);
        assert.equal(problems({ guardrailsContainerLogStorage: "32Mi", nodeAgentContainerLogMaxFiles: 3 }), "");
        assert.match(problems({ nodeAgentContainerLogMaxSize: "100Mi" }), /ops:guardrailsContainerLogStorage: 64Mi is less than .* = 500Mi/);
        assert.match(problems({ nodeAgentContainerLogMaxFiles: 1 }), /ops:nodeAgentContainerLogMaxFiles: 1 is below 2/);
        assert.match(problems({ guardrailsContainerLogStorage: "200Gi" }), /ops:guardrailsContainerLogStorage: 200Gi is more than a node has for pods \(90112Mi of nodePoolEphemeralStorage 100Gi after the reservations\)/);
        assert.match(problems({ backupsJobTmpSize: "90Gi" }), /ops:backupsJobTmpSize: 90Gi plus the log allowance 64Mi is more than a node has for pods/);
    });

    it("the node agent's configuration carries the log rotation the allowance is checked against", () => {
        const k = kubeletConfiguration(loadConfig(mapSource("ops", "test", VALID)));
        assert.deepEqual([k.containerLogMaxSize, k.containerLogMaxFiles], ["10Mi", 5], "kubelet v1.36 defaults (pkg/kubelet/apis/config/v1beta1/defaults.go)");
    });

    it("npm run explain: a node whose reservations exceed it has no room, never negative room", () => {
        const a = allocatable({ count: 1, cpu: 1000, memory: 2 ** 30, ephemeralStorage: 2 ** 30 }, { systemReserved: { cpu: 2000, memory: 2 ** 31, ephemeralStorage: 2 ** 31 }, kubeReserved: { cpu: 0, memory: 0 }, evictionMemoryAvailable: "100Mi", evictionNodefsAvailable: "10%" });
        assert.deepEqual([a.cpu, a.memory, a.ephemeralStorage], [0, 0, 0]);
    });
});
