import json, sys, json_repair
out = {}
for line in open(sys.argv[1]):
    case = json.loads(line)
    try:
        v = json_repair.loads(case["input"])
        # json_repair returns "" for no JSON
        out[case["id"]] = {"value": v} if v != "" or case["input"].strip() in ('""', "''") else {"none": True}
    except Exception as e:
        out[case["id"]] = {"none": True}
json.dump(out, open(sys.argv[2], "w"))
