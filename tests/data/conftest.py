from threadpoolctl import threadpool_limits

# one BLAS thread: multi-threaded OpenBLAS is much slower on the shared 2-core machine
threadpool_limits(limits=1, user_api="blas")
