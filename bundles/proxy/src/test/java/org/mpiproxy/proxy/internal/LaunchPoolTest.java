package org.mpiproxy.proxy.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;

class LaunchPoolTest {

    @Test
    void shouldDefaultToFourThreadsPerCoreAndTakeAConfiguredNumberAsIs() {
        assertEquals(8, LaunchPool.threads(0, 2));
        assertEquals(4, LaunchPool.threads(0, 1));
        assertEquals(4, LaunchPool.threads(0, 0));
        assertEquals(3, LaunchPool.threads(3, 2));
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> LaunchPool.threads(-1, 2));
        assertEquals("launch.threads=-1 must be >= 0 (0: 4 per core)", e.getMessage());
    }

    @Test
    void shouldRunAsManyLaunchesAtOnceAsItHasThreadsAndFollowAResize() throws Exception {
        ThreadPoolExecutor pool = LaunchPool.create(3, "test-launch-");
        try {
            assertAllRunAtOnce(pool, 3);
            LaunchPool.resize(pool, 6);
            assertAllRunAtOnce(pool, 6);
            LaunchPool.resize(pool, 2);
            assertEquals(2, pool.getCorePoolSize());
            assertEquals(2, pool.getMaximumPoolSize());
            assertTrue(pool.allowsCoreThreadTimeOut(), "idle launch threads end");
        } finally {
            pool.shutdownNow();
        }
    }

    /** Submits {@code n} tasks that each wait for all {@code n} to have started. */
    private static void assertAllRunAtOnce(ThreadPoolExecutor pool, int n) throws InterruptedException {
        CountDownLatch started = new CountDownLatch(n);
        CountDownLatch release = new CountDownLatch(1);
        for (int i = 0; i < n; i++) {
            pool.execute(() -> {
                started.countDown();
                try {
                    release.await(Await.CEILING.toSeconds(), TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            });
        }
        try {
            assertTrue(started.await(Await.CEILING.toSeconds(), TimeUnit.SECONDS), n + " launches should run at once");
        } finally {
            release.countDown();
        }
    }
}
