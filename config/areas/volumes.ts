import { list, patterned } from "../schema";

const statefulSetRef = patterned(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?\/[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/, 'a StatefulSet "<namespace>/<name>", such as "data/postgres"');

/**
 * The volume guard (components/lib/claimGuard.ts) refuses a run that no longer declares a
 * StatefulSet with data volumes of the last deploy (moved to another namespace, removed): its
 * claims would stay behind unused, or go with their namespace. A StatefulSet listed here may go in
 * this run, after its data was backed up; the entry has no effect once the StatefulSet is gone.
 */
export const volumes = {
    released: list('StatefulSets of the last deploy, each "<namespace>/<name>", whose data volumes this run may leave behind or delete with their namespace (back them up first; the volume guard refuses to move or drop a StatefulSet with data volumes otherwise)', [], statefulSetRef("a StatefulSet <namespace>/<name>")),
};
