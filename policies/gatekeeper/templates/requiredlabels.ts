import type { TemplateRule } from "../types";
import { requiredKeyViolations, type RequiredKey } from "../engine/required-keys";

export interface Params {
    message?: string;
    labels?: RequiredKey[];
}

export const rule: TemplateRule<Params> = {
    kind: "K8sRequiredLabels",
    template: "requiredlabels",
    category: "general",
    description: "Requires resources to contain specified labels, with values matching provided regular expressions.",
    parameterSchema: {
        "type": "object",
        "properties": {
            "message": {
                "type": "string"
            },
            "labels": {
                "type": "array",
                "description": "A list of labels and values the object must specify.",
                "items": {
                    "type": "object",
                    "properties": {
                        "key": {
                            "type": "string",
                            "description": "The required label."
                        },
                        "allowedRegex": {
                            "type": "string",
                            "description": "If specified, a regular expression the annotation's value must match. The value must contain at least one match for the regular expression."
                        }
                    }
                }
            }
        }
    },
    validate({ review, parameters }) {
        return requiredKeyViolations(review.object.metadata?.labels, parameters.labels, parameters.message, {
            missing: "you must provide labels",
            noun: "Label",
            detailsKey: "missing_labels",
        });
    },
};
