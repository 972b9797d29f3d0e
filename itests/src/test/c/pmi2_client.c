/*
 * A PMI-2 client as MPICH-family MPIs built for Slurm are: Slurm's libpmi2 (cc pmi2_client.c
 * -lpmi2). Every rank puts a key whose value holds a space and a ';', fences, reads every rank's
 * key, the job attributes and a node attribute rank 0 put, and says each on a line of its own:
 *   rank R read key-S=<value>
 *   rank R PMI_process_mapping=<value>
 *   rank R universeSize=<value>
 *   rank R node attribute=<value>
 *   rank R of N done
 * A failing call prints "rank R: <call> failed: <code>" to stderr and exits 2. Node attributes
 * belong to a node: on several nodes, argv[1] lists the ranks that put one, a rank of each node
 * (comma-separated, e.g. "0,2"); without it rank 0 does.
 */
#include <slurm/pmi2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank = -1;

static void check(int rc, const char *call)
{
    if (rc != PMI2_SUCCESS) {
        fprintf(stderr, "rank %d: %s failed: %d\n", rank, call, rc);
        exit(2);
    }
}

/* whether rank is in the comma-separated list (NULL: rank 0 only) */
static int listed(const char *list, int r)
{
    if (list == NULL) {
        return r == 0;
    }
    for (const char *p = list; *p != '\0';) {
        char *end;
        long v = strtol(p, &end, 10);
        if (end == p) {
            return 0;
        }
        if (v == r) {
            return 1;
        }
        p = *end == ',' ? end + 1 : end;
    }
    return 0;
}

int main(int argc, char **argv)
{
    int spawned, size, appnum, found, length;
    char jobid[PMI2_MAX_VALLEN], key[PMI2_MAX_KEYLEN], value[PMI2_MAX_VALLEN];

    check(PMI2_Init(&spawned, &size, &rank, &appnum), "PMI2_Init");
    check(PMI2_Job_GetId(jobid, sizeof(jobid)), "PMI2_Job_GetId");

    snprintf(key, sizeof(key), "key-%d", rank);
    snprintf(value, sizeof(value), "value of rank %d; from %s", rank, jobid);
    check(PMI2_KVS_Put(key, value), "PMI2_KVS_Put");
    if (listed(argc > 1 ? argv[1] : NULL, rank)) {
        snprintf(value, sizeof(value), "put by rank %d", rank);
        check(PMI2_Info_PutNodeAttr("node-attribute", value), "PMI2_Info_PutNodeAttr");
    }
    check(PMI2_KVS_Fence(), "PMI2_KVS_Fence");

    for (int r = 0; r < size; r++) {
        snprintf(key, sizeof(key), "key-%d", r);
        check(PMI2_KVS_Get(jobid, r, key, value, sizeof(value), &length), "PMI2_KVS_Get");
        printf("rank %d read %s=%s\n", rank, key, value);
    }
    check(PMI2_Info_GetJobAttr("PMI_process_mapping", value, sizeof(value), &found), "PMI2_Info_GetJobAttr");
    printf("rank %d PMI_process_mapping=%s\n", rank, found ? value : "(not found)");
    check(PMI2_Info_GetJobAttr("universeSize", value, sizeof(value), &found), "PMI2_Info_GetJobAttr");
    printf("rank %d universeSize=%s\n", rank, found ? value : "(not found)");
    check(PMI2_Info_GetNodeAttr("node-attribute", value, sizeof(value), &found, 1), "PMI2_Info_GetNodeAttr");
    printf("rank %d node attribute=%s\n", rank, found ? value : "(not found)");

    check(PMI2_KVS_Fence(), "PMI2_KVS_Fence");
    printf("rank %d of %d done\n", rank, size);
    fflush(stdout);
    check(PMI2_Finalize(), "PMI2_Finalize");
    return 0;
}
