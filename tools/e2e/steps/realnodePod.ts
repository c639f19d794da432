/**
 * The real node's name, and how the e2e finds a process of one of its pods (to act from inside
 * the pod's network namespace): shared by steps/realnode.ts and steps/realnodeFlows.ts.
 */
import * as fs from "node:fs";
import * as path from "node:path";

export const NODE_NAME = "e2e-node";

/** A process of the pod (any: they share its network namespace), from its cgroup in the namespace's view. */
export function podPid(uid: string): number | undefined {
    const root = "/sys/fs/cgroup/pids";
    const want = `pod${uid}`;
    const walk = (dir: string, depth: number): number | undefined => {
        if (depth > 4) return undefined;
        for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
            if (!e.isDirectory()) continue;
            const p = path.join(dir, e.name);
            if (e.name === want || e.name.replace(/_/g, "-") === want) {
                const pids = fs.readFileSync(path.join(p, "cgroup.procs"), "utf8").split("\n").filter(Boolean);
                const sub = fs.readdirSync(p, { withFileTypes: true }).filter((x) => x.isDirectory()).flatMap((x) => fs.readFileSync(path.join(p, x.name, "cgroup.procs"), "utf8").split("\n").filter(Boolean));
                const pid = [...pids, ...sub][0];
                return pid ? Number(pid) : undefined;
            }
            const r = walk(p, depth + 1);
            if (r) return r;
        }
        return undefined;
    };
    return walk(root, 0);
}

