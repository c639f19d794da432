// The test pack served as the pack is (policies/pack/server.ts).
import { servePolicyPack } from "../../../server";
import { packArgs } from "../policies";

servePolicyPack("sdk-adapter-test", packArgs);
