// The test pack served by @pulumi/policy's own server.
import { PolicyPack } from "@pulumi/policy";
import { packArgs } from "../policies";

new PolicyPack("sdk-adapter-test", packArgs);
