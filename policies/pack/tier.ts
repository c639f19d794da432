/** The tier setting shared by the rules that are stricter in prod. */
import type { PolicyConfigJSONSchema } from "@pulumi/policy/schema";

export interface TierConfig {
    tier: "dev" | "prod";
}

export const tierSchema: Record<string, PolicyConfigJSONSchema> = {
    tier: { type: "string", enum: ["dev", "prod"], default: "prod", description: "the environment tier; prod-only checks are skipped in dev" },
};
