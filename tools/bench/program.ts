/**
 * The program's cost over the SDK's own floor: median wall time of the render's program run per
 * stack, and of the floor: the same custom resources (type, name, inputs) registered bare under the
 * same mocks, so the ratio is what the program's own logic (config, components) costs. The second
 * floor registers the same resources through their provider classes (classFloorProgram.ts): what
 * those classes add per resource (the kubernetes classes' aliases and output-only properties) is
 * then in the floor, and the program over it is its own logic alone.
 */
import * as path from "path";
import { performance } from "perf_hooks";
import { runProgram } from "../../cli/harness/program";
import { readStackValues } from "../../cli/harness/stackConfig";

export const median = (xs: number[]) => {
    const s = [...xs].sort((a, b) => a - b);
    return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

export interface ProgramBench {
    stack: string;
    resources: number;
    programMs: number;
    floorMs: number;
    ratio: number;
    classFloorMs: number;
    classRatio: number;
}

export async function benchProgram(stack: string, runs: number): Promise<ProgramBench> {
    const values = readStackValues(stack);
    const base = { project: values.project, stack, config: values.config, secretKeys: values.secretKeys };
    const warm = await runProgram(base);
    if (warm.errors.length) throw new Error(`${stack} does not render: ${warm.errors.join("; ")}`);
    const resources = warm.resources.length;
    const floorProgram = path.join(__dirname, "floorProgram.ts");
    (globalThis as any).__benchReplay = warm.resources.filter((r) => r.custom);
    const components = warm.resources.length - (globalThis as any).__benchReplay.length;
    const classFloorProgram = path.join(__dirname, "classFloorProgram.ts");
    await runProgram({ ...base, programPath: floorProgram });
    await runProgram({ ...base, programPath: classFloorProgram });
    const program: number[] = [];
    const floor: number[] = [];
    const classFloor: number[] = [];
    for (let i = 0; i < runs; i++) {
        // Interleaved, so that machine noise hits both series alike.
        let t = performance.now();
        await runProgram(base);
        program.push(performance.now() - t);
        t = performance.now();
        const f = await runProgram({ ...base, programPath: floorProgram });
        floor.push(performance.now() - t);
        if (f.resources.length + components !== resources) throw new Error(`floor registered ${f.resources.length}, expected ${resources - components}`);
        t = performance.now();
        const c = await runProgram({ ...base, programPath: classFloorProgram });
        classFloor.push(performance.now() - t);
        if (c.errors.length || c.resources.length + components !== resources) throw new Error(`the class floor registered ${c.resources.length}, expected ${resources - components}: ${c.errors.join("; ")}`);
    }
    const programMs = median(program);
    const floorMs = median(floor);
    const classFloorMs = median(classFloor);
    return { stack, resources, programMs, floorMs, ratio: programMs / floorMs, classFloorMs, classRatio: programMs / classFloorMs };
}
