import v8 from "node:v8"; v8.setFlagsFromString("--semi-space-growth-factor=8");
