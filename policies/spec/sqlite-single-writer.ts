/**
 * Section 2.11: the booking application keeps its data in a persistent SQLite volume (8.3: the
 * uptime monitor and chat UI too). SQLite has one writer, so such a workload runs one replica,
 * is replaced with the Recreate strategy (never two pods on the file) and is never autoscaled.
 * Workloads mark themselves with the label (or annotation) ops.example.com/storage: sqlite.
 */
import { specRule, type Finding } from "../pack/rule";
import { describe, type StackView } from "../pack/stack";

export const STORAGE_MARKER = "ops.example.com/storage";
export const SQLITE = "sqlite";

export const rule = specRule({
    name: "sqlite-single-writer",
    description: `A workload marked ${STORAGE_MARKER}: ${SQLITE} (label or annotation) is a Deployment or StatefulSet with one replica, the Recreate strategy (Deployment) and no HorizontalPodAutoscaler (section 2.11)`,
    check(stack: StackView): Finding[] {
        const findings: Finding[] = [];
        const marked = stack.objects.filter(({ object }) => object.metadata?.labels?.[STORAGE_MARKER] === SQLITE || object.metadata?.annotations?.[STORAGE_MARKER] === SQLITE);
        for (const { urn, object } of marked) {
            const what = describe(object);
            if (object.kind !== "Deployment" && object.kind !== "StatefulSet") {
                findings.push({ urn, message: `${what} is marked ${STORAGE_MARKER}: ${SQLITE} but is not a Deployment or StatefulSet` });
                continue;
            }
            const replicas = object.spec?.replicas ?? 1;
            if (replicas !== 1) findings.push({ urn, message: `${what} keeps SQLite data but runs ${replicas} replicas; SQLite needs exactly one writer` });
            if (object.kind === "Deployment" && object.spec?.strategy?.type !== "Recreate") {
                findings.push({ urn, message: `${what} keeps SQLite data but uses the ${object.spec?.strategy?.type ?? "RollingUpdate (default)"} strategy; use Recreate so two pods never open the file` });
            }
            const scalers = stack.ofKind("HorizontalPodAutoscaler").filter(({ object: hpa }) =>
                stack.namespaceOf(hpa) === stack.namespaceOf(object) && hpa.spec?.scaleTargetRef?.kind === object.kind && hpa.spec?.scaleTargetRef?.name === object.metadata?.name);
            for (const s of scalers) findings.push({ urn: s.urn, message: `${describe(s.object)} autoscales ${what}, which keeps SQLite data and must stay at one replica` });
        }
        return findings;
    },
});
